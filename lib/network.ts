/**
 * Lambda placement in a VPC of the account's (`-c vpcId=… -c vpcSubnets=…`, AWS Control Tower's
 * CT.LAMBDA.PR.3): a security group of the stack's own that lets only HTTPS out (the functions
 * call AWS APIs and nothing else) and no traffic in, and with `-c vpcRouteTables=…` gateway
 * endpoints for S3 and DynamoDB on those route tables, so what the functions store does not leave
 * the AWS network. Glue, S3 Tables and the Lambda API (the committer asking for maintenance) have
 * no gateway endpoints: the subnets reach them through a NAT gateway or interface endpoints of
 * the account's own.
 */
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { VpcSettings } from './config.ts';
import type { FloeFunction } from './lambda.ts';
import { acknowledge } from './nag.ts';

export class FloeNetwork extends Construct {
  readonly securityGroup: ec2.CfnSecurityGroup;

  constructor(
    scope: Construct,
    id: string,
    private readonly vpc: VpcSettings,
  ) {
    super(scope, id);
    const stack = Stack.of(this);
    this.securityGroup = new ec2.CfnSecurityGroup(this, 'Functions', {
      vpcId: vpc.vpcId,
      groupDescription: `${stack.stackName}: Floe functions (HTTPS to AWS APIs only)`,
      securityGroupEgress: [
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: '0.0.0.0/0', description: 'AWS APIs' },
      ],
    });
    if (vpc.routeTableIds.length > 0) {
      for (const service of ['s3', 'dynamodb']) {
        new ec2.CfnVPCEndpoint(this, `${service === 's3' ? 'S3' : 'DynamoDb'}Endpoint`, {
          vpcId: vpc.vpcId,
          serviceName: `com.amazonaws.${stack.region}.${service}`,
          vpcEndpointType: 'Gateway',
          routeTableIds: [...vpc.routeTableIds],
        });
      }
    }
  }

  /** Places `fn` in the subnets, with the network interfaces Lambda needs for that. */
  place(fn: FloeFunction): void {
    const cfn = fn.function.node.defaultChild as lambda.CfnFunction;
    cfn.vpcConfig = {
      subnetIds: [...this.vpc.subnetIds],
      securityGroupIds: [this.securityGroup.attrGroupId],
    };
    // What AWSLambdaVPCAccessExecutionRole grants; EC2 takes no resource for these.
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'VpcNetworkInterfaces',
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
    const policy = fn.role.node.findChild('DefaultPolicy');
    // Lambda checks the role may create the interfaces when the function is created.
    fn.function.node.addDependency(policy);
    acknowledge(
      policy,
      'AwsSolutions-IAM5[Resource::*]',
      'Lambda creates and removes the network interfaces of a function placed in a VPC (-c vpcSubnets); the EC2 network-interface actions take no resource-level permissions.',
    );
  }
}
